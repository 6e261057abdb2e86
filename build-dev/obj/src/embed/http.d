build-dev/obj/src/embed/http.o: src/embed/http.c src/embed/embed.h \
 src/net/net.h src/util/util.h src/util/time.h include/remem.h
src/embed/embed.h:
src/net/net.h:
src/util/util.h:
src/util/time.h:
include/remem.h:
