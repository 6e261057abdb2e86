build-dev/obj/src/lexical/lexical.o: src/lexical/lexical.c \
 src/lexical/lexical.h src/util/util.h src/util/time.h
src/lexical/lexical.h:
src/util/util.h:
src/util/time.h:
