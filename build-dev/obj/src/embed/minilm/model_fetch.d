build-dev/obj/src/embed/minilm/model_fetch.o: \
 src/embed/minilm/model_fetch.c src/embed/minilm/minilm.h src/net/net.h \
 src/util/util.h src/util/time.h include/remem.h
src/embed/minilm/minilm.h:
src/net/net.h:
src/util/util.h:
src/util/time.h:
include/remem.h:
