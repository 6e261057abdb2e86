build-dev/obj/src/text/analyse.o: src/text/analyse.c src/text/analyse.h
src/text/analyse.h:
