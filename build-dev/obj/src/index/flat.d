build-dev/obj/src/index/flat.o: src/index/flat.c src/index/flat.h \
 src/index/flat_kernels.h src/util/util.h src/util/time.h
src/index/flat.h:
src/index/flat_kernels.h:
src/util/util.h:
src/util/time.h:
