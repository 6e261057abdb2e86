build-dev/obj/src/engine/model.o: src/engine/model.c \
 src/embed/minilm/minilm.h include/remem.h
src/embed/minilm/minilm.h:
include/remem.h:
