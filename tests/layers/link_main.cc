// An empty program linked with one floor's library whole (every object in
// it) and only the floors that library declares below it: if a file of the
// floor calls into a floor it does not declare (above it, or beside it), the
// link fails. The layers.link_* tests are these links.
int main() { return 0; }
