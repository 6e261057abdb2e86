build-dev/obj/src/net/net.o: src/net/net.c src/net/net.h src/util/util.h \
 src/util/time.h include/remem.h
src/net/net.h:
src/util/util.h:
src/util/time.h:
include/remem.h:
