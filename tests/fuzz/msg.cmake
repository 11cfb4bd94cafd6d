# The wire decoders. The seed corpus is written by `test_msg --corpus DIR`
# (the encodings of every sample message plus broken ones).
sluice_fuzz(msg LIBS sluice_proto)
if(SLUICE_FUZZ)
	# The libraries are built without coverage instrumentation; compile
	# the codec and the reader it stands on into the target, so libFuzzer
	# sees their branches (the archive copies are then never linked).
	target_sources(fuzz_msg PRIVATE ${PROJECT_SOURCE_DIR}/src/proto/msg.c
		${PROJECT_SOURCE_DIR}/src/util/buf.c)
endif()
