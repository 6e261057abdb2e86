build-dev/obj/src/store/store.o: src/store/store.c src/store/store.h \
 include/remem.h
src/store/store.h:
include/remem.h:
