# The HTML report embeds the Vega, Vega-Lite and vega-embed runtimes so that it
# works offline. They come from npm (versions pinned in web/package-lock.json;
# scripts/install-deps.sh runs `npm ci` in web/) and are compiled into the binary
# by cmake/EmbedScripts.cmake. Without them the build still succeeds and
# `dvfslab report` explains how to get them.
set(DVFSLAB_WEB_MODULES ${PROJECT_SOURCE_DIR}/web/node_modules)
set(DVFSLAB_REPORT_SCRIPTS
    ${DVFSLAB_WEB_MODULES}/vega/build/vega.min.js
    ${DVFSLAB_WEB_MODULES}/vega-lite/build/vega-lite.min.js
    ${DVFSLAB_WEB_MODULES}/vega-embed/build/vega-embed.min.js)

function(dvfslab_embed_report_scripts target)
  set(output ${CMAKE_CURRENT_BINARY_DIR}/generated/report_scripts.cpp)
  set(missing)
  foreach(script IN LISTS DVFSLAB_REPORT_SCRIPTS)
    if(NOT EXISTS ${script})
      list(APPEND missing ${script})
    endif()
  endforeach()
  if(missing)
    message(WARNING "dvfslab: the HTML report's JavaScript runtimes are missing (${missing}). "
                    "Run `npm ci` in web/ (scripts/install-deps.sh does it) and configure again; "
                    "until then `dvfslab report` stops with an error that says so.")
    set(inputs "")
    set(scripts)
  else()
    string(REPLACE ";" "|" inputs "${DVFSLAB_REPORT_SCRIPTS}")
    set(scripts ${DVFSLAB_REPORT_SCRIPTS})
  endif()
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${output} -DINPUTS=${inputs} -P ${PROJECT_SOURCE_DIR}/cmake/EmbedScripts.cmake
    DEPENDS ${PROJECT_SOURCE_DIR}/cmake/EmbedScripts.cmake ${scripts}
    COMMENT "Embedding the report's JavaScript runtimes"
    VERBATIM)
  target_sources(${target} PRIVATE ${output})
endfunction()
