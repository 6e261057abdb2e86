build-dev/obj/src/telemetry/telemetry.o: src/telemetry/telemetry.c \
 src/net/net.h src/util/util.h src/util/time.h src/telemetry/telemetry.h \
 src/util/utf8.h
src/net/net.h:
src/util/util.h:
src/util/time.h:
src/telemetry/telemetry.h:
src/util/utf8.h:
