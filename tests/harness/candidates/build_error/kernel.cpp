// fails before any header is parsed, so the test does not pay for compiling torch's headers
int relu_scale(float x) {
    return undeclared_identifier * x;
}
