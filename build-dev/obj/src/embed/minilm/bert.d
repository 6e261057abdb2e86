build-dev/obj/src/embed/minilm/bert.o: src/embed/minilm/bert.c \
 src/embed/minilm/bert.h src/embed/minilm/safetensors.h \
 /usr/include/x86_64-linux-gnu/openblas-pthread/cblas.h \
 /usr/include/x86_64-linux-gnu/openblas-pthread/openblas_config.h \
 include/remem.h src/util/util.h src/util/time.h
src/embed/minilm/bert.h:
src/embed/minilm/safetensors.h:
/usr/include/x86_64-linux-gnu/openblas-pthread/cblas.h:
/usr/include/x86_64-linux-gnu/openblas-pthread/openblas_config.h:
include/remem.h:
src/util/util.h:
src/util/time.h:
