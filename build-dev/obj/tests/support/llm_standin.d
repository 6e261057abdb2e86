build-dev/obj/tests/support/llm_standin.o: tests/support/llm_standin.c \
 tests/support/llm_standin.h
tests/support/llm_standin.h:
