# gpula_python_print(<out> <code>): what `python -c <code>` prints (stripped), run by the Python
# CMake finds (-DPython_EXECUTABLE=... picks one); empty without a Python or when <code> fails.
# How the build finds libraries installed as Python wheels (scipy-openblas32, cuDSS, ...).
function(gpula_python_print out code)
  find_package(Python 3.9 COMPONENTS Interpreter QUIET)
  set(value "")
  if(Python_EXECUTABLE)
    execute_process(COMMAND "${Python_EXECUTABLE}" -c "${code}" OUTPUT_VARIABLE value
                    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  endif()
  set(${out} "${value}" PARENT_SCOPE)
endfunction()
