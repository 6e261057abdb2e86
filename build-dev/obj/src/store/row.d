build-dev/obj/src/store/row.o: src/store/row.c src/store/store.h \
 include/remem.h
src/store/store.h:
include/remem.h:
