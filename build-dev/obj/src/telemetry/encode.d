build-dev/obj/src/telemetry/encode.o: src/telemetry/encode.c \
 include/remem.h src/telemetry/telemetry.h src/util/util.h \
 src/util/time.h
include/remem.h:
src/telemetry/telemetry.h:
src/util/util.h:
src/util/time.h:
