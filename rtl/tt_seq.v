`default_nettype none
// tt_seq: the sequencer. Executes a program from the program memory (golden/program.py has the format):
// fetch an op record's header, load its payload into the descriptor register, give the op to its unit
// (tt_contract, tt_ewise, tt_sce, tt_rank), wait for the unit, fold the op's saturation count and max |x| into the
// statistics slot of its destination tensor, and go on with the next record until an END header.
//
// The random stream (SPEC 3) is one stream: this module holds its state between ops, loads it into the
// unit that runs an op (seed_load with the state's preimage, one cycle) and takes the advanced state back
// when the op is done (the contraction engine and the element-wise unit: tt_sce and tt_rank draw nothing). The host sets it with seed_load / seed like tt_lfsr.
//
// Two halves: a front end reads the next record (header, checks, payload into its own descriptor register) while the
// op before it runs, and a back end runs the op. Per op: 1 seed cycle + 1 start cycle + the unit's cycles + 1
// statistics cycle, in which the back end takes the next record when the front end has it (1 fetch cycle, 1 header
// cycle, nwords load cycles after the previous take; else it waits). So two ops' starts lie max(the first's unit
// cycles + 2, the next's nwords + 3) apart (golden/program.py program_cycles). The fetch cycle covers the program
// memory's output register: the header decode starts from a flip-flop.
//
// Errors are states: the sequencer stops (busy low, error high), keeps the op's pc and the reason, and
// leaves every memory readable until clear_error. Codes (SEQ_ERR_*, golden/arch.py SeqError): 1 illegal op
// (unknown kind, or a payload length that is not its unit's: an element-wise record may stop before the tables'
// addresses, EW_SHORT_WORDS, a contraction before its preload's fields, CT_SHORT_WORDS, and the descriptor bits it
// does not load read as 0; a RANK record when the rank unit is not built), 2 the program runs off the program
// memory, 3 an address outside every bank, 4 a bank asked for more reads in a cycle than it has ports, 5 the unit
// refused the descriptor (unit_error_code says why, the unit's own code), 6 a start arrived while busy (the running
// op finishes, then the program stops).
module tt_seq #(
  parameter integer PROG_AW    = 11,    // program memory address width
  parameter integer PROG_DEPTH = 2048,  // program words, <= 2^PROG_AW
  parameter integer MAX_W      = 16,    // width of the units' max |x| outputs
  parameter integer DESC_BITS  = 1504,  // descriptor register: 32 x DESC_WORDS of tt_desc_fields.vh
  parameter integer RANK       = 0,     // 1: the rank unit (unit 3) is built, RANK records are legal
  // the words of the element-wise, softmax and rank units' descriptor copy: their longest payload (tt_desc_fields.vh)
  parameter integer UNIT_WORDS = 8
) (
  input  wire                    clk,
  input  wire                    rst,
  // host control
  input  wire                    start,
  input  wire [PROG_AW-1:0]      start_pc,
  input  wire                    clear_error,
  input  wire                    clear_counters,
  input  wire                    seed_load,
  input  wire [31:0]             seed,
  output wire [31:0]             lfsr_state,
  output wire                    busy,
  output wire                    done,
  output wire                    error,
  output wire [3:0]              error_code,
  output wire [3:0]              error_unit_code,
  output wire [PROG_AW-1:0]      error_pc,
  output wire [PROG_AW-1:0]      pc,
  // program memory (read latency 2: the RAM and its output register)
  output reg                     prog_rd_en,
  output reg  [PROG_AW-1:0]      prog_rd_addr,
  input  wire [31:0]             prog_rd_data,
  // the op in flight's descriptor: the contraction engine's copy, and the other units' (their longest payload)
  output wire [DESC_BITS-1:0]    ct_desc,
  output wire [32*UNIT_WORDS-1:0] desc,
  output wire [1:0]              unit,            // 0 contract, 1 element-wise, 2 softmax cross-entropy, 3 rank
  output wire [3:0]              unit_start,      // one-hot by unit
  output wire                    unit_seed_load,
  output wire [31:0]             unit_seed,
  input  wire [3:0]              unit_done,
  input  wire [3:0]              unit_error,
  input  wire [15:0]             unit_error_code,
  input  wire [127:0]            unit_sat,
  input  wire [4*MAX_W-1:0]      unit_maxabs,
  input  wire [63:0]             unit_lfsr,       // contract, element-wise (tt_sce and tt_rank draw nothing)
  input  wire                    mem_addr_err,
  input  wire                    mem_port_err,
  // statistics slots: host access while idle (read latency 1)
  input  wire                    stat_rd_en,
  input  wire [5:0]              stat_rd_addr,
  output wire [31:0]             stat_rd_sat,
  output wire [MAX_W-1:0]        stat_rd_max,
  input  wire                    stat_wr_sat_en,  // host write of a slot's saturation count
  input  wire                    stat_wr_max_en,  // ... or of its max register
  input  wire [5:0]              stat_wr_addr,
  input  wire [31:0]             stat_wr_data,
  // performance counters
  output wire [63:0]             cycles,          // busy cycles
  output wire [255:0]            unit_cycles,     // cycles each unit held an op (start to done), by unit
  output wire [31:0]             ops,             // ops completed
  output wire [31:0]             sat_total        // saturations of every op, saturating
);

`include "tt_desc_fields.vh"
`include "tt_arch.vh"
  // Back end: the op in flight.
  localparam [2:0] S_IDLE  = 3'd0;
  localparam [2:0] S_NEXT  = 3'd1;  // waiting for the front end's next record
  localparam [2:0] S_SEED  = 3'd2;
  localparam [2:0] S_START = 3'd3;
  localparam [2:0] S_WAIT  = 3'd4;
  localparam [2:0] S_STAT /* verilator public */ = 3'd5;  // the uvm OpMonitor reads it (verif/top/tb_uvm_accel.py)
  localparam [2:0] S_ERR   = 3'd6;
  // Front end: the next record, read while the op before it runs.
  localparam [2:0] F_IDLE  = 3'd0;
  localparam [2:0] F_FETCH = 3'd1;  // the header's read is in flight
  localparam [2:0] F_HDR   = 3'd2;
  localparam [2:0] F_LOAD  = 3'd3;
  localparam [2:0] F_READY = 3'd4;  // a record in f_desc_q
  localparam [2:0] F_END   = 3'd5;  // an END header
  localparam [2:0] F_BAD   = 3'd6;  // a record the back end fails on (f_err_q)
  localparam [PROG_AW:0] DEPTH = PROG_DEPTH[PROG_AW:0];

  generate
    if (PROG_DEPTH < 2 || PROG_DEPTH > (1 << PROG_AW)) begin : g_bad_depth
      error_tt_seq_PROG_DEPTH_must_be_2_to_2_pow_PROG_AW u_error ();
    end
    if (DESC_BITS != 32 * DESC_WORDS) begin : g_bad_desc_bits
      error_tt_seq_DESC_BITS_must_be_32_times_DESC_WORDS u_error ();
    end
    if (UNIT_WORDS < EW_WORDS || UNIT_WORDS < SCE_WORDS || UNIT_WORDS < RK_WORDS || UNIT_WORDS > DESC_WORDS)
    begin : g_bad_unit_words
      error_tt_seq_UNIT_WORDS_must_hold_the_ewise_sce_and_rank_payloads u_error ();
    end
    if (MAX_W < 2 || MAX_W > 32) begin : g_bad_max_w
      error_tt_seq_MAX_W_must_be_2_to_32 u_error ();
    end
    if (RANK < 0 || RANK > 1) begin : g_bad_rank
      error_tt_seq_RANK_must_be_0_or_1 u_error ();
    end
  endgenerate

  reg [2:0]         state_q;
  reg [PROG_AW-1:0] pc_q;
  reg [31:0]        hdr_q;
  reg [DESC_BITS-1:0] ct_desc_q;     // the contraction engine's copy of its op's descriptor
  reg [32*UNIT_WORDS-1:0] desc_q;    // the other units' copy
  reg [1:0]         unit_q;
  reg               done_q;
  reg [3:0]         err_q;
  reg [3:0]         err_unit_q;
  reg               abort_q;       // a start arrived while busy
  reg               mem_addr_err_q;
  reg               mem_port_err_q;
  reg [31:0]        lfsr_q;

  reg [2:0]         f_state_q;
  reg [PROG_AW-1:0] f_pc_q;        // the record the front end reads or holds
  reg [PROG_AW-1:0] f_rd_ptr_q;    // the program word the next read takes (a register: the BRAM address path)
  reg [PROG_AW-1:0] f_next_q;      // the record after it, and whether that starts inside the program memory
  reg               f_next_fits_q;
  reg [31:0]        f_hdr_q;
  reg [7:0]         f_widx_q;      // payload word being loaded
  reg [DESC_WORDS-1:0] f_wsel_q;   // in F_LOAD: one-hot of f_widx_q, each word's own write enable; 0 otherwise
  reg [1:0]         f_unit_q;
  reg [3:0]         f_err_q;
  reg [DESC_BITS-1:0] f_desc_q;

  wire [HDR_KIND_W-1:0]   h_kind = prog_rd_data[HDR_KIND_W-1:0];
  wire [HDR_NWORDS_W-1:0] h_nwords = prog_rd_data[HDR_NWORDS_LSB +: HDR_NWORDS_W];
  wire [HDR_NWORDS_W-1:0] f_nwords = f_hdr_q[HDR_NWORDS_LSB +: HDR_NWORDS_W];
  wire [5:0]              slot = hdr_q[HDR_SLOT_LSB +: HDR_SLOT_W];
  wire                    observe = hdr_q[HDR_OBSERVE_BIT];

  // The payload length each kind must have, and the unit that runs it.
  reg       h_legal;
  reg [1:0] h_unit;
  always @* begin
    case (h_kind)
      KIND_CONTRACT: begin h_legal = (h_nwords == CT_WORDS[HDR_NWORDS_W-1:0]) ||
                                     (h_nwords == CT_SHORT_WORDS[HDR_NWORDS_W-1:0]); h_unit = 2'd0; end
      KIND_EWISE:    begin h_legal = (h_nwords == EW_WORDS[HDR_NWORDS_W-1:0]) ||
                                     (h_nwords == EW_SHORT_WORDS[HDR_NWORDS_W-1:0]); h_unit = 2'd1; end
      KIND_SCE:      begin h_legal = (h_nwords == SCE_WORDS[HDR_NWORDS_W-1:0]); h_unit = 2'd2; end
      KIND_RANK:     begin h_legal = (RANK != 0) && (h_nwords == RK_WORDS[HDR_NWORDS_W-1:0]); h_unit = 2'd3; end
      default:       begin h_legal = 1'b0;                                      h_unit = 2'd0; end
    endcase
  end

  // The record must end inside the program memory (pc + nwords <= PROG_DEPTH - 1); the next one starts after it.
  wire [PROG_AW+8:0] h_last = {9'd0, f_pc_q} + {{(PROG_AW+1){1'b0}}, h_nwords};
  wire               h_fits = h_last < {8'd0, DEPTH};
  wire [PROG_AW+8:0] h_next = h_last + 1;

  // ---- statistics slots ----
  reg [31:0]      sat_mem [0:63];
  reg [MAX_W-1:0] max_mem [0:63];
  reg [31:0]      stat_sat_q;
  reg [MAX_W-1:0] stat_max_q;
  // The op's slot is read in S_SEED and copied into flip-flops in S_START (a unit takes at least two cycles),
  // so S_STAT's read-modify-write starts from a flip-flop, not from the slot memory's clock-to-out.
  wire            seq_stat_rd = (state_q == S_SEED);
  wire [5:0]      stat_addr = seq_stat_rd ? slot : stat_rd_addr;
  always @(posedge clk) begin
    if (seq_stat_rd || stat_rd_en) begin
      stat_sat_q <= sat_mem[stat_addr];
      stat_max_q <= max_mem[stat_addr];
    end
  end
  assign stat_rd_sat = stat_sat_q;
  assign stat_rd_max = stat_max_q;

  reg [31:0]      slot_sat_q;
  reg [MAX_W-1:0] slot_max_q;
  always @(posedge clk) begin
    if (state_q == S_START) begin
      slot_sat_q <= stat_sat_q;
      slot_max_q <= stat_max_q;
    end
  end

  wire [31:0]      op_sat = unit_sat[32*unit_q +: 32];
  wire [MAX_W-1:0] op_max = unit_maxabs[MAX_W*unit_q +: MAX_W];
  wire [32:0]      sat_sum = {1'b0, slot_sat_q} + {1'b0, op_sat};
  wire [32:0]      total_sum = {1'b0, sat_total_q} + {1'b0, op_sat};
  reg  [31:0]      sat_total_q;
  always @(posedge clk) begin
    if (state_q == S_STAT) begin
      sat_mem[slot] <= sat_sum[32] ? 32'hFFFF_FFFF : sat_sum[31:0];
      max_mem[slot] <= (observe && op_max > slot_max_q) ? op_max : slot_max_q;
    end else begin
      if (stat_wr_sat_en) begin
        sat_mem[stat_wr_addr] <= stat_wr_data;
      end
      if (stat_wr_max_en) begin
        max_mem[stat_wr_addr] <= stat_wr_data[MAX_W-1:0];
      end
    end
  end

  // ---- control ----
  wire running = (state_q != S_IDLE) && (state_q != S_ERR);
  // The back end takes the next record at its op's statistics cycle, or as soon as the front end has it.
  wire want_next = (state_q == S_NEXT) || (state_q == S_STAT);
  wire take = want_next && !abort_q && (f_state_q == F_READY);

  always @* begin
    prog_rd_en = 1'b0;
    prog_rd_addr = f_rd_ptr_q;
    // Reads run two words ahead of the record (the memory's read latency): F_FETCH pc + 1, F_HDR pc + 2, F_LOAD
    // pc + 3 + widx; the next header's read goes out when the back end takes this record.
    if (state_q == S_IDLE) begin
      prog_rd_en = start;
      prog_rd_addr = start_pc;
    end else begin
      case (f_state_q)
        F_FETCH, F_HDR, F_LOAD: prog_rd_en = 1'b1;
        F_READY: begin prog_rd_en = take && f_next_fits_q; prog_rd_addr = f_next_q; end
        default: prog_rd_en = 1'b0;
      endcase
    end
  end

  task automatic fail(input [3:0] code);
    begin
      state_q <= S_ERR;
      err_q <= code;
    end
  endtask

  // Back end.
  always @(posedge clk) begin
    if (rst) begin
      state_q <= S_IDLE;
      pc_q <= {PROG_AW{1'b0}};
      hdr_q <= 32'd0;
      unit_q <= 2'd0;
      done_q <= 1'b0;
      err_q <= ERR_NONE;
      err_unit_q <= 4'd0;
      abort_q <= 1'b0;
      mem_addr_err_q <= 1'b0;
      mem_port_err_q <= 1'b0;
    end else begin
      if (start && running) begin
        abort_q <= 1'b1;
      end
      case (state_q)
        S_IDLE: begin
          if (start) begin
            pc_q <= start_pc;
            done_q <= 1'b0;
            abort_q <= 1'b0;
            if ({1'b0, start_pc} >= DEPTH) begin
              fail(SEQ_ERR_OVERRUN);
            end else begin
              state_q <= S_NEXT;
            end
          end
        end
        S_SEED: begin
          state_q <= S_START;
          mem_addr_err_q <= 1'b0;
          mem_port_err_q <= 1'b0;
        end
        S_START: begin
          state_q <= S_WAIT;
        end
        S_WAIT: begin
          mem_addr_err_q <= mem_addr_err_q || mem_addr_err;
          mem_port_err_q <= mem_port_err_q || mem_port_err;
          if (unit_done[unit_q]) begin
            err_unit_q <= unit_error_code[4*unit_q +: 4];
            if (unit_error[unit_q]) begin
              fail(SEQ_ERR_UNIT);
            end else if (mem_addr_err_q || mem_addr_err) begin
              fail(SEQ_ERR_ADDR);
            end else if (mem_port_err_q || mem_port_err) begin
              fail(SEQ_ERR_PORT);
            end else begin
              state_q <= S_STAT;
            end
          end
        end
        S_NEXT, S_STAT: begin
          if (abort_q) begin
            pc_q <= f_pc_q;
            fail(SEQ_ERR_BUSY);
          end else begin
            case (f_state_q)
              F_READY: begin
                pc_q <= f_pc_q;
                hdr_q <= f_hdr_q;
                unit_q <= f_unit_q;
                state_q <= S_SEED;
              end
              F_END: begin
                pc_q <= f_pc_q;
                if (start) begin  // a start in the END's cycle is a start while running too (abort_q is late)
                  fail(SEQ_ERR_BUSY);
                end else begin
                  state_q <= S_IDLE;
                  done_q <= 1'b1;
                end
              end
              F_BAD: begin
                pc_q <= f_pc_q;
                fail(f_err_q);
              end
              default: state_q <= S_NEXT;
            endcase
          end
        end
        S_ERR: begin
          if (clear_error) begin
            state_q <= S_IDLE;
            err_q <= ERR_NONE;
            err_unit_q <= 4'd0;
          end
        end
        default: fail(SEQ_ERR_ILLEGAL);
      endcase
    end
  end

  // Front end: fetches a record's header, checks it and loads its payload into f_desc_q while the op before it
  // runs; the back end takes it (or the END, or the error) only when that op is done.
  always @(posedge clk) begin
    f_wsel_q <= {DESC_WORDS{1'b0}};  // kept only on the paths that stay in or enter F_LOAD
    if (rst) begin
      f_state_q <= F_IDLE;
      f_pc_q <= {PROG_AW{1'b0}};
      f_rd_ptr_q <= {PROG_AW{1'b0}};
      f_next_q <= {PROG_AW{1'b0}};
      f_next_fits_q <= 1'b0;
      f_hdr_q <= 32'd0;
      f_widx_q <= 8'd0;
      f_unit_q <= 2'd0;
      f_err_q <= ERR_NONE;
    end else if (state_q == S_IDLE) begin
      f_state_q <= (start && {1'b0, start_pc} < DEPTH) ? F_FETCH : F_IDLE;
      f_pc_q <= start_pc;
      f_rd_ptr_q <= start_pc + 1'b1;
    end else if (state_q == S_ERR) begin
      f_state_q <= F_IDLE;
    end else begin
      case (f_state_q)
        F_FETCH: begin
          f_state_q <= F_HDR;
          f_rd_ptr_q <= f_rd_ptr_q + 1'b1;
        end
        F_HDR: begin
          f_rd_ptr_q <= f_rd_ptr_q + 1'b1;
          f_hdr_q <= prog_rd_data;
          f_widx_q <= 8'd0;
          f_unit_q <= h_unit;
          f_next_q <= h_next[PROG_AW-1:0];
          f_next_fits_q <= h_next < {8'd0, DEPTH};
          if (h_kind == KIND_END) begin
            f_state_q <= F_END;
          end else if (!h_legal) begin
            f_state_q <= F_BAD;
            f_err_q <= SEQ_ERR_ILLEGAL;
          end else if (!h_fits) begin
            f_state_q <= F_BAD;
            f_err_q <= SEQ_ERR_OVERRUN;
          end else begin
            f_state_q <= F_LOAD;
            f_wsel_q <= {{(DESC_WORDS-1){1'b0}}, 1'b1};
          end
        end
        F_LOAD: begin
          f_rd_ptr_q <= f_rd_ptr_q + 1'b1;
          f_widx_q <= f_widx_q + 8'd1;
          if (f_widx_q + 8'd1 == f_nwords) begin
            f_state_q <= F_READY;
          end else begin
            f_wsel_q <= f_wsel_q << 1;
          end
        end
        F_READY: begin
          if (take) begin
            f_pc_q <= f_next_q;
            f_rd_ptr_q <= f_next_q + 1'b1;
            if (f_next_fits_q) begin
              f_state_q <= F_FETCH;
            end else begin
              f_state_q <= F_BAD;
              f_err_q <= SEQ_ERR_OVERRUN;
            end
          end
        end
        default: ;  // F_IDLE; F_END and F_BAD hold until the back end takes them
      endcase
    end
  end

  // The descriptor registers: the front end's is cleared as the header arrives, so the words a short record does
  // not carry read as 0, and payload word f_widx_q arrives in F_LOAD (enabled by its own bit of f_wsel_q: a decoder
  // of f_widx_q for every word would sit on the path to DESC_BITS flip-flops); the op in flight's is copied from it
  // the cycle after the take (S_SEED: the units read it from S_START on, and the front end's clear comes a cycle
  // later, in F_HDR). The contraction engine has a copy of its own, loaded with its ops only, so that its
  // descriptor sits beside it: its configuration and legality decode from these flip-flops in its take cycle, and
  // a register shared with the other units is placed between them, far from it. Each word has its own registered
  // clear and copy enables: one enable net to DESC_BITS flip-flops spans the device. (* keep *): yosys would merge
  // the identical flip-flops back into one.
  wire f_clr_d = !rst && state_q != S_IDLE && state_q != S_ERR && f_state_q == F_FETCH;  // F_HDR next
  genvar gw;
  for (gw = 0; gw < DESC_WORDS; gw = gw + 1) begin : g_desc_word
    reg clr_q;
    reg ct_copy_q;
    (* keep *)
    always @(posedge clk) begin
      clr_q     <= f_clr_d;
      ct_copy_q <= take && f_unit_q == 2'd0;
    end
    always @(posedge clk) begin
      if (clr_q) begin
        f_desc_q[32*gw +: 32] <= 32'd0;
      end else if (f_wsel_q[gw]) begin
        f_desc_q[32*gw +: 32] <= prog_rd_data;
      end
      if (ct_copy_q) begin
        ct_desc_q[32*gw +: 32] <= f_desc_q[32*gw +: 32];
      end
    end
    if (gw < UNIT_WORDS) begin : g_unit_word
      reg copy_q;
      (* keep *)
      always @(posedge clk) begin
        copy_q <= take && f_unit_q != 2'd0;
      end
      always @(posedge clk) begin
        if (copy_q) begin
          desc_q[32*gw +: 32] <= f_desc_q[32*gw +: 32];
        end
      end
    end
  end

  // ---- the random stream between ops ----
  always @(posedge clk) begin
    if (rst) begin
      lfsr_q <= LFSR_SEED_XOR;
    end else if (seed_load && !running) begin
      lfsr_q <= ((seed ^ LFSR_SEED_XOR) == 32'd0) ? 32'd1 : (seed ^ LFSR_SEED_XOR);
    end else if (state_q == S_WAIT && unit_done[unit_q] && !unit_q[1]) begin  // units 0 and 1 draw
      lfsr_q <= unit_lfsr[32*unit_q[0] +: 32];
    end
  end

  // ---- performance counters ----
  reg [63:0] cycles_q;
  reg [63:0] unit_cycles_q [0:3];
  reg [31:0] ops_q;
  wire       in_unit = (state_q == S_START) || (state_q == S_WAIT);
  integer    u;
  always @(posedge clk) begin
    if (rst || clear_counters) begin
      cycles_q <= 64'd0;
      ops_q <= 32'd0;
      sat_total_q <= 32'd0;
      for (u = 0; u < 4; u = u + 1) begin
        unit_cycles_q[u] <= 64'd0;
      end
    end else begin
      if (running) begin
        cycles_q <= cycles_q + 64'd1;
      end
      if (in_unit) begin
        unit_cycles_q[unit_q] <= unit_cycles_q[unit_q] + 64'd1;
      end
      if (state_q == S_STAT) begin
        ops_q <= ops_q + 32'd1;
        sat_total_q <= total_sum[32] ? 32'hFFFF_FFFF : total_sum[31:0];
      end
    end
  end

  assign lfsr_state = lfsr_q;
  assign busy = running;
  assign done = done_q;
  assign error = (state_q == S_ERR);
  assign error_code = err_q;
  assign error_unit_code = err_unit_q;
  assign error_pc = pc_q;
  assign pc = pc_q;
  assign ct_desc = ct_desc_q;
  assign desc = desc_q;
  assign unit = unit_q;
  assign unit_start = (state_q == S_START) ? (4'b0001 << unit_q) : 4'b0000;
  assign unit_seed_load = (state_q == S_SEED);
  assign unit_seed = lfsr_q ^ LFSR_SEED_XOR;
  assign cycles = cycles_q;
  assign unit_cycles = {unit_cycles_q[3], unit_cycles_q[2], unit_cycles_q[1], unit_cycles_q[0]};
  assign ops = ops_q;
  assign sat_total = sat_total_q;

endmodule
`default_nettype wire
