# Writes build/generated/ptdp_build_info.cpp at every build with the git commit
# (and whether the tree was dirty), so results name the code that made them.
set(PTDP_GENERATED_DIR ${CMAKE_BINARY_DIR}/generated)
add_custom_target(ptdp_version
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_SOURCE_DIR}
          -DOUTPUT=${PTDP_GENERATED_DIR}/ptdp_build_info.cpp
          -P ${CMAKE_SOURCE_DIR}/cmake/WriteVersion.cmake
  BYPRODUCTS ${PTDP_GENERATED_DIR}/ptdp_build_info.cpp
  COMMENT "ptdp: recording git commit")
