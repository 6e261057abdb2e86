build-dev/obj/src/prompt/prompt.o: src/prompt/prompt.c \
 src/prompt/prompt.h src/util/util.h src/util/time.h
src/prompt/prompt.h:
src/util/util.h:
src/util/time.h:
