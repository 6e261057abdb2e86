build-dev/obj/src/engine/telemetry_glue.o: src/engine/telemetry_glue.c \
 src/engine/telemetry_glue.h src/engine/engine.h include/remem.h \
 src/config/config.h src/embed/embed.h src/index/flat.h \
 src/lexical/lexical.h src/llm/llm.h src/net/net.h src/util/util.h \
 src/util/time.h src/store/store.h src/text/analyse.h \
 src/telemetry/telemetry.h
src/engine/telemetry_glue.h:
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
src/telemetry/telemetry.h:
