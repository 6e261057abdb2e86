build-dev/obj/src/util/utf8.o: src/util/utf8.c src/util/utf8.h
src/util/utf8.h:
