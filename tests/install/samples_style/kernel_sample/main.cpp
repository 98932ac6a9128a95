// Never built: the configure of this project stops at ascendc_library.
int main() { return 1; }
