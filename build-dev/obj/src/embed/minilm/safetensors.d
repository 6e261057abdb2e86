build-dev/obj/src/embed/minilm/safetensors.o: \
 src/embed/minilm/safetensors.c src/embed/minilm/safetensors.h \
 include/remem.h src/util/util.h src/util/time.h
src/embed/minilm/safetensors.h:
include/remem.h:
src/util/util.h:
src/util/time.h:
