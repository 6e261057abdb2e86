build-dev/obj/src/embed/minilm/wordpiece.o: src/embed/minilm/wordpiece.c \
 src/embed/minilm/wordpiece.h include/remem.h src/util/util.h \
 src/util/time.h
src/embed/minilm/wordpiece.h:
include/remem.h:
src/util/util.h:
src/util/time.h:
