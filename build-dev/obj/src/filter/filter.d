build-dev/obj/src/filter/filter.o: src/filter/filter.c \
 src/filter/filter.h include/remem.h src/util/time.h
src/filter/filter.h:
include/remem.h:
src/util/time.h:
