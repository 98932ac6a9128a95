// Stands for an Ascend C kernel source: never compiled, the configure stops before.
#error "an Ascend C kernel needs the vendor's compiler"
