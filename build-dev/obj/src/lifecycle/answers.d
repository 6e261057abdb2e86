build-dev/obj/src/lifecycle/answers.o: src/lifecycle/answers.c \
 src/lifecycle/answers.h src/llm/llm.h src/util/util.h src/util/time.h
src/lifecycle/answers.h:
src/llm/llm.h:
src/util/util.h:
src/util/time.h:
