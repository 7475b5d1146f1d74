//go:build !linux

package main

func lowerThreadPriority(int) {}
