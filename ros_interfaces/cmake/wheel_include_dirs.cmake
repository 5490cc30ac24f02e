# The PyPI wheels' exported CMake targets carry include paths of the machine that built them
# (/opt/python/cp311-cp311/include/python3.11 and its numpy include dir); CMake refuses
# targets whose include directories do not exist.  Replace them by this machine's paths.
# Include after the find_package calls of the interface package's dependencies.
find_package(Python3 REQUIRED COMPONENTS Interpreter Development NumPy)
get_property(_imported DIRECTORY PROPERTY IMPORTED_TARGETS)
foreach(_target IN LISTS _imported)
  get_target_property(_dirs ${_target} INTERFACE_INCLUDE_DIRECTORIES)
  if(NOT _dirs)
    continue()
  endif()
  set(_fixed "")
  foreach(_dir IN LISTS _dirs)
    if(NOT IS_DIRECTORY "${_dir}" AND _dir MATCHES "numpy")
      list(APPEND _fixed ${Python3_NumPy_INCLUDE_DIRS})
    elseif(NOT IS_DIRECTORY "${_dir}" AND _dir MATCHES "include/python3")
      list(APPEND _fixed ${Python3_INCLUDE_DIRS})
    else()
      list(APPEND _fixed "${_dir}")
    endif()
  endforeach()
  set_target_properties(${_target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_fixed}")
endforeach()
