sluice_test(face_nng LIBS sluice_server TIMEOUT 60)
