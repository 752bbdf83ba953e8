"""A host function without @cute.jit handed to cute.compile."""
import cutlass
import cutlass.cute as cute


def launch(mX, mY):
    pass
