build-dev/obj/src/util/time.o: src/util/time.c src/util/time.h
src/util/time.h:
