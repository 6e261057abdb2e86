build-dev/obj/src/embed/minilm/minilm.o: src/embed/minilm/minilm.c \
 src/embed/minilm/minilm.h src/embed/minilm/bert.h \
 src/embed/minilm/safetensors.h src/embed/embed.h \
 src/embed/minilm/wordpiece.h include/remem.h src/util/util.h \
 src/util/time.h
src/embed/minilm/minilm.h:
src/embed/minilm/bert.h:
src/embed/minilm/safetensors.h:
src/embed/embed.h:
src/embed/minilm/wordpiece.h:
include/remem.h:
src/util/util.h:
src/util/time.h:
