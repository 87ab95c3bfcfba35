//===- pch.cpp - anchor for the precompiled MLIR headers ------------------===//
//
// Part of qeff. The header list lives in cmake/AddQEff.cmake.
//
//===----------------------------------------------------------------------===//
