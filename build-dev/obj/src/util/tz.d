build-dev/obj/src/util/tz.o: src/util/tz.c src/util/tz.h
src/util/tz.h:
