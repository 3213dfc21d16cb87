# lit configuration: golden tests of texc (`# RUN:` / `# CHECK:` lines in .tex files).
import os
import lit.formats

config.name = "texc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".tex"]
config.excludes = ["inputs"]
config.test_source_root = os.path.dirname(__file__)
build = lit_config.params.get("build", "build")
root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
texc = os.path.join(root, build, "texc")
config.substitutions.append(("%texc", texc))
config.substitutions.append(("%root", root))
config.substitutions.append(("%not", "not"))
config.environment["PATH"] = "/usr/lib/llvm-19/bin:" + os.environ.get("PATH", "")
config.environment["TEX_NUM_THREADS"] = "2"
