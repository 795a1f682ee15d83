#pragma once
/// @file gpula.h
/// Umbrella header.
#include <gpula/device.h>
#include <gpula/dtype.h>
#include <gpula/distributed.h>
#include <gpula/error.h>
#include <gpula/grouped_matmul.h>
#include <gpula/linalg.h>
#include <gpula/log.h>
#include <gpula/matmul.h>
#include <gpula/options.h>
#include <gpula/tensor.h>
