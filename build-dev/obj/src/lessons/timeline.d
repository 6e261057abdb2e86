build-dev/obj/src/lessons/timeline.o: src/lessons/timeline.c \
 src/lessons/lessons.h src/engine/ops.h src/engine/engine.h \
 include/remem.h src/config/config.h src/embed/embed.h src/index/flat.h \
 src/lexical/lexical.h src/llm/llm.h src/net/net.h src/util/util.h \
 src/util/time.h src/store/store.h src/text/analyse.h
src/lessons/lessons.h:
src/engine/ops.h:
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
