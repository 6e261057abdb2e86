build-dev/obj/src/index/flat_kernels.o: src/index/flat_kernels.c \
 src/index/flat_kernels.h
src/index/flat_kernels.h:
