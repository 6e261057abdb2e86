build-dev/obj/src/maintenance/prune.o: src/maintenance/prune.c \
 src/index/flat.h src/maintenance/archive_file.h \
 src/lifecycle/lifecycle.h src/config/config.h src/engine/engine.h \
 include/remem.h src/embed/embed.h src/lexical/lexical.h src/llm/llm.h \
 src/net/net.h src/util/util.h src/util/time.h src/store/store.h \
 src/text/analyse.h src/engine/ops.h src/engine/engine.h \
 src/maintenance/maintenance.h src/engine/telemetry_glue.h \
 src/telemetry/telemetry.h
src/index/flat.h:
src/maintenance/archive_file.h:
src/lifecycle/lifecycle.h:
src/config/config.h:
src/engine/engine.h:
include/remem.h:
src/embed/embed.h:
src/lexical/lexical.h:
src/llm/llm.h:
src/net/net.h:
src/util/util.h:
src/util/time.h:
src/store/store.h:
src/text/analyse.h:
src/engine/ops.h:
src/engine/engine.h:
src/maintenance/maintenance.h:
src/engine/telemetry_glue.h:
src/telemetry/telemetry.h:
