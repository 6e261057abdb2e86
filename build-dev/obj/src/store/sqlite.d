build-dev/obj/src/store/sqlite.o: src/store/sqlite.c src/store/store.h \
 include/remem.h src/util/util.h src/util/time.h
src/store/store.h:
include/remem.h:
src/util/util.h:
src/util/time.h:
