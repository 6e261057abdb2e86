build-dev/obj/src/engine/namespace.o: src/engine/namespace.c \
 src/engine/engine.h include/remem.h src/config/config.h \
 src/embed/embed.h src/index/flat.h src/lexical/lexical.h src/llm/llm.h \
 src/net/net.h src/util/util.h src/util/time.h src/store/store.h \
 src/text/analyse.h src/text/wordnet.h src/engine/ops.h \
 src/engine/engine.h src/score/score.h
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
src/text/wordnet.h:
src/engine/ops.h:
src/engine/engine.h:
src/score/score.h:
