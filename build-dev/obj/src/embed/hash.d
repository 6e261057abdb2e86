build-dev/obj/src/embed/hash.o: src/embed/hash.c src/embed/embed.h \
 include/remem.h src/text/analyse.h
src/embed/embed.h:
include/remem.h:
src/text/analyse.h:
