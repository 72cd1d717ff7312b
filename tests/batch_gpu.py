import sys
print("skip: todo")
sys.exit(77)
