build-dev/obj/src/lifecycle/summarize.o: src/lifecycle/summarize.c \
 src/lifecycle/answers.h src/lifecycle/extractive.h include/remem.h \
 src/lifecycle/lifecycle.h src/config/config.h src/engine/engine.h \
 src/embed/embed.h src/index/flat.h src/lexical/lexical.h src/llm/llm.h \
 src/net/net.h src/util/util.h src/util/time.h src/store/store.h \
 src/text/analyse.h src/engine/ops.h src/engine/engine.h
src/lifecycle/answers.h:
src/lifecycle/extractive.h:
include/remem.h:
src/lifecycle/lifecycle.h:
src/config/config.h:
src/engine/engine.h:
src/embed/embed.h:
src/index/flat.h:
src/lexical/lexical.h:
src/llm/llm.h:
src/net/net.h:
src/util/util.h:
src/util/time.h:
src/store/store.h:
src/text/analyse.h:
src/engine/ops.h:
src/engine/engine.h:
