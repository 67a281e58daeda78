// ppk/counting.hpp -- the exact privacy curve of a noisy count with natural noise (NoisyCount).
// One header per stage under ppk/counting/: bound (DeltaBounds, the Gaussian mechanism),
// noiseless (sigma = 0 and the flat region), loss (the privacy loss and its posterior sums),
// root (the threshold L = eps), tails (the two tails at it), threshold (the certified bound) and
// direction (the facade).  The mathematics is in docs/method.md.
#pragma once

#include "ppk/counting/direction.hpp"
