build-dev/obj/src/maintenance/archive_file.o: \
 src/maintenance/archive_file.c src/maintenance/archive_file.h
src/maintenance/archive_file.h:
