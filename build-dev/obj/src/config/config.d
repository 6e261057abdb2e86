build-dev/obj/src/config/config.o: src/config/config.c \
 src/config/config.h src/util/tz.h
src/config/config.h:
src/util/tz.h:
