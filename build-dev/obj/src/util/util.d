build-dev/obj/src/util/util.o: src/util/util.c src/util/util.h \
 src/util/time.h
src/util/util.h:
src/util/time.h:
