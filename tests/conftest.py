import os

# Tests never load tokenizer plugins that happen to be installed on the machine.
os.environ["SIMDEDUP_LOAD_PLUGINS"] = ""
