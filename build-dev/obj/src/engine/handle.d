build-dev/obj/src/engine/handle.o: src/engine/handle.c \
 src/engine/engine.h include/remem.h src/config/config.h \
 src/embed/embed.h src/index/flat.h src/lexical/lexical.h src/llm/llm.h \
 src/net/net.h src/util/util.h src/util/time.h src/store/store.h \
 src/text/analyse.h src/score/score.h
src/engine/engine.h:
include/remem.h:
src/config/config.h:
src/embed/embed.h:
src/index/flat.h:
src/lexical/lexical.h:
src/llm/llm.h:
src/net/net.h:
src/util/util.h:
src/util/time.h:
src/store/store.h:
src/text/analyse.h:
src/score/score.h:
