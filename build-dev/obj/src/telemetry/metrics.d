build-dev/obj/src/telemetry/metrics.o: src/telemetry/metrics.c \
 src/telemetry/telemetry.h src/util/util.h src/util/time.h
src/telemetry/telemetry.h:
src/util/util.h:
src/util/time.h:
