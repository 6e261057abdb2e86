build-dev/obj/src/text/entities.o: src/text/entities.c \
 src/text/entities.h src/text/analyse.h
src/text/entities.h:
src/text/analyse.h:
