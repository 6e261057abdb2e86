build-dev/obj/src/text/wordnet.o: src/text/wordnet.c src/text/wordnet.h
src/text/wordnet.h:
